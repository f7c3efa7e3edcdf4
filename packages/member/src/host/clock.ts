// The Clock lives in @spoolmq/protocol (src/clock.ts), shared with the gateway. Re-exported here
// so the member's many imports of host/clock.js stay as they are: one Clock, two import paths.
export {
  type Clock,
  type TimerHandle,
  TIMER_DELAY_MAX_MS,
  systemClock,
  monotonicClock,
  afterTurn,
  ManualClock,
  settle,
} from '@spoolmq/protocol';
