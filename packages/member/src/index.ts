export {
  createLocalService,
  type LocalService,
  type LocalServiceOptions,
} from './host/local-service.js';
export {
  type Clock,
  type TimerHandle,
  systemClock,
  ManualClock,
  settle,
  TIMER_DELAY_MAX_MS,
} from './host/clock.js';
export { type CommandLog, LocalCommandLog } from './host/command-log.js';
export { TokenCodec, TokenKind, type TokenClaims, TOKEN_LENGTH } from './host/tokens.js';
export { CursorCodec, CursorKind } from './host/cursors.js';
export { PatternCache } from './host/patterns.js';
export { SpoolHost, type SpoolHostOptions } from './host/spool-host.js';
export { HostedSpoolService } from './host/hosted-service.js';
