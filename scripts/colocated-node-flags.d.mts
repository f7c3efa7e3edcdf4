/** Node flags for mq processes that share a machine's cores (see colocated-node-flags.mjs). */
export declare const COLOCATED_NODE_FLAGS: readonly string[];
