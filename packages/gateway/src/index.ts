export { createGatewayApp } from './app.js';
export type { GatewayOptions } from './options.js';
export { MESSAGE_SIZE_MAX_BYTES_DEFAULT } from './options.js';
export { startHttpServer, type RunningServer, type ServerOptions } from './server.js';
export { fingerprintOf } from './dedup.js';
export { parseDurationMs } from './duration.js';
