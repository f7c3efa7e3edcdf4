// Node flags for mq processes that share a machine's cores with each other (`npm run cluster`,
// and the cluster benchmark, which measures that deployment).
//
// V8 hands parts of each collection to helper threads (parallel scavenge, concurrent marking).
// When every core is already busy with another mq process, those threads wait for a core while
// the main thread waits for them, and a few-millisecond pause becomes tens. Measured on 2 cores
// (three members and a gateway at 5,000 sends/s for 30 s): p99 send latency 97, 86 and 97 ms
// with V8's defaults, 41, 37 and 60 ms with a single-threaded collector, for about 4% fewer
// sends/s at saturation. A process with cores to itself keeps V8's defaults.
export const COLOCATED_NODE_FLAGS = ['--single-threaded-gc'];
