import { describe, expect, it } from 'vitest';
import { metricSamples } from '../../src/cluster/index.js';

const TEXT = `# HELP mq_member_spool_serving This member is the open primary.
# TYPE mq_member_spool_serving gauge
mq_member_spool_serving{member="n2",spool="default",group="spool:default#1"} 1
mq_member_spool_serving{member="n2",spool="jobs",group="spool:jobs#3"} 0
mq_gateway_requests_in_flight 4
mq_member_raft_term{member="n2",group="meta"} 17
`;

describe('metricSamples', () => {
  it('reads names, labels and values, skipping comments', () => {
    expect(metricSamples(TEXT, 'mq_member_spool_serving')).toEqual([
      { name: 'mq_member_spool_serving', labels: { member: 'n2', spool: 'default', group: 'spool:default#1' }, value: 1 },
      { name: 'mq_member_spool_serving', labels: { member: 'n2', spool: 'jobs', group: 'spool:jobs#3' }, value: 0 },
    ]);
    expect(metricSamples(TEXT, 'mq_gateway_requests_in_flight')).toEqual([
      { name: 'mq_gateway_requests_in_flight', labels: {}, value: 4 },
    ]);
    expect(metricSamples(TEXT)).toHaveLength(4);
    expect(metricSamples(TEXT, 'absent')).toEqual([]);
  });
});
