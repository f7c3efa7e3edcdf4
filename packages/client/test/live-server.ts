// Starts the real in-memory server (gateway over the local service) on a free loopback port
// for tests that exercise the client end to end.

import { startHttpServer } from '@spoolmq/gateway';
import { createLocalService } from '@spoolmq/member';
import { MqClient, type MqClientOptions } from '../src/index.js';

export interface LiveServer {
  readonly baseUrl: string;
  client(options?: Partial<MqClientOptions>): MqClient;
  close(): Promise<void>;
}

export async function startLiveServer(): Promise<LiveServer> {
  const service = createLocalService();
  const server = await startHttpServer(service, { host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${server.port}/v1`;
  return {
    baseUrl,
    client: (options = {}) => new MqClient({ baseUrl, apiKey: 'test-key', ...options }),
    close: async () => {
      await server.close();
      await service.close();
    },
  };
}

let counter = 0;
/** A queue name unique within the test run. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}`;
}
