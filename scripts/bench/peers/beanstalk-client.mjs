// A small beanstalkd client for the benchmarks: one TCP connection, requests pipelined (written
// without waiting for earlier answers; beanstalkd answers in order), only the commands the
// workloads need: use, watch, ignore, put, reserve-with-timeout, delete.
// Protocol: https://github.com/beanstalkd/beanstalkd/blob/master/doc/protocol.txt
import net from 'node:net';

const CRLF = Buffer.from('\r\n');
/** Largest reply header line we accept (bytes); beanstalkd's longest is well under 100. */
const LINE_BYTES_MAX = 1024;

export class BeanstalkConnection {
  /** @param {net.Socket} socket */
  constructor(socket) {
    this.socket = socket;
    /** Pending replies in request order: {resolve, reject, body: boolean}. */
    this.waiting = [];
    this.buffer = Buffer.alloc(0);
    this.closed = false;
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', (error) => this.failAll(error));
    socket.on('close', () => this.failAll(new Error('beanstalkd connection closed')));
  }

  /**
   * Connects to beanstalkd at 127.0.0.1:`port`. Rejects on a connection error.
   * @param {number} port
   * @returns {Promise<BeanstalkConnection>}
   */
  static connect(port) {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new BeanstalkConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  /** Puts a job on the used tube; resolves its id. Rejects on any reply but INSERTED. */
  async put(payload, ttrSeconds = 60) {
    const head = Buffer.from(`put 0 0 ${ttrSeconds} ${payload.length}\r\n`);
    const line = await this.request(Buffer.concat([head, payload, CRLF]));
    if (!line.startsWith('INSERTED ')) throw new Error(`beanstalkd put: ${line}`);
    return line.slice(9);
  }

  /**
   * Reserves a job, waiting up to `timeoutSeconds` (integer >= 0). Resolves {id, payload} or null
   * on TIMED_OUT. Rejects on any other reply.
   */
  async reserve(timeoutSeconds) {
    const reply = await this.request(Buffer.from(`reserve-with-timeout ${timeoutSeconds}\r\n`), true);
    if (reply === 'TIMED_OUT' || reply === 'DEADLINE_SOON') return null;
    if (typeof reply === 'string') throw new Error(`beanstalkd reserve: ${reply}`);
    return reply;
  }

  /** Deletes a reserved job. Rejects on any reply but DELETED. */
  async delete(id) {
    const line = await this.request(Buffer.from(`delete ${id}\r\n`));
    if (line !== 'DELETED') throw new Error(`beanstalkd delete ${id}: ${line}`);
  }

  /** `use`, `watch` or `ignore` a tube; resolves the reply line. */
  command(line) {
    return this.request(Buffer.from(`${line}\r\n`));
  }

  close() {
    this.closed = true;
    this.socket.destroy();
  }

  request(bytes, body = false) {
    if (this.closed) return Promise.reject(new Error('beanstalkd connection closed'));
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject, body });
      this.socket.write(bytes);
    });
  }

  onData(chunk) {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    // Bounded by the bytes received: every iteration consumes a reply or stops.
    while (this.waiting.length > 0) {
      const end = this.buffer.indexOf(CRLF);
      if (end < 0) {
        if (this.buffer.length > LINE_BYTES_MAX) this.failAll(new Error('beanstalkd reply line too long'));
        return;
      }
      const line = this.buffer.toString('latin1', 0, end);
      if (line.startsWith('RESERVED ')) {
        const [, id, bytesText] = line.split(' ');
        const bytes = Number(bytesText);
        const total = end + 2 + bytes + 2;
        if (this.buffer.length < total) return;
        const payload = Buffer.from(this.buffer.subarray(end + 2, end + 2 + bytes));
        this.buffer = this.buffer.subarray(total);
        this.waiting.shift().resolve({ id, payload });
        continue;
      }
      this.buffer = this.buffer.subarray(end + 2);
      this.waiting.shift().resolve(line);
    }
  }

  failAll(error) {
    this.closed = true;
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) w.reject(error);
  }
}
