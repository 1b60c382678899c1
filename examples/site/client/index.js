export { onMessageFrom, postTo } from './message.js';
export { DEAD_LINK_CODE, ReconnectingWebSocket, WsCloseEvent, WsErrorEvent, WsMessageEvent, } from './websocket.js';
