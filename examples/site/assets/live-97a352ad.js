// Gatehouse example app: a live panel on the WebSocket endpoint (/ws, echo mode in
// examples/gatehouse.config.json), using the client library with no bundler.
import { ReconnectingWebSocket } from '/client/index.js';

const stateEl = document.getElementById('ws-state');
const reconnectsEl = document.getElementById('ws-reconnects');
const pongEl = document.getElementById('ws-pong');
const STATES = ['connecting', 'open', 'closing', 'closed'];
let opens = 0;

const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
const ws = new ReconnectingWebSocket(scheme + '//' + location.host + '/ws', undefined, {
  heartbeatInterval: 10000,
  reconnectInterval: 2000,
});

function showState() {
  stateEl.textContent = STATES[ws.readyState] ?? String(ws.readyState);
}

ws.addEventListener('open', () => {
  opens += 1;
  reconnectsEl.textContent = String(opens - 1);
  showState();
});
ws.addEventListener('close', showState);
ws.addEventListener('message', (event) => {
  if (event.data === '{"type":"pong"}') {
    const now = new Date();
    pongEl.textContent = now.toLocaleTimeString();
    pongEl.dateTime = now.toISOString();
  }
});
// Queued until the socket opens, so the first pong shows at once; the heartbeat pings every 10 s after.
ws.send({ type: 'ping' });
showState();
// A reconnect attempt has no event of its own: refresh the state now and then.
setInterval(showState, 1000);
