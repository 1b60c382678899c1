// The reference: a bare `ws` WebSocketServer echoing every message on /echo, nothing else.
//   node bench/ws/bare-echo.mjs
import { WebSocketServer } from 'ws';
import { listenUpgrades } from './child.mjs';

const wss = new WebSocketServer({ noServer: true, clientTracking: false });
listenUpgrades((req, socket, head) => {
  if (req.url !== '/echo') return false;
  wss.handleUpgrade(req, socket, head, (ws) => {
    ws.on('error', () => {});
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
  });
  return true;
});
