// @spoolmq/testkit: test infrastructure shared by the packages. The HTTP conformance suite is here;
// the cluster launcher, fault injection and history checker join it as they are written.

export * from './conformance/index.js';
export * from './chaos/index.js';
export * from './cluster/index.js';
export * from './openapi/index.js';
