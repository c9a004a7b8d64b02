/** The scripted fake model (test/support/fake_model.py) as a child process. */

import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { FAKE_MODEL_SCRIPT, PYTHON, tempDir, waitFor } from './env';

/** A reply in the JSON form `Reply.from_json` reads. */
export type ScriptedReply = string | Record<string, unknown>;

export interface ModelRequest {
  model?: string;
  input?: Array<Record<string, unknown>>;
  reasoning?: { effort?: string };
  service_tier?: string;
  [key: string]: unknown;
}

/** A held reply: `hold` names the gate, `after` counts events sent before it. */
export function held(name: string, after: number, reply: ScriptedReply): ScriptedReply {
  return { hold: name, after, reply };
}

export class FakeModel {
  readonly requests: ModelRequest[] = [];
  private reached = new Set<string>();
  private constructor(
    readonly baseUrl: string,
    private readonly child: ChildProcess,
    private readonly dir: string,
  ) {}

  static async start(script: ScriptedReply[]): Promise<FakeModel> {
    const dir = tempDir('script');
    const file = path.join(dir, 'script.json');
    fs.writeFileSync(file, JSON.stringify(script));
    const child = spawn(PYTHON, [FAKE_MODEL_SCRIPT, file], { stdio: ['pipe', 'pipe', 'inherit'] });
    const requests: ModelRequest[] = [];
    const reached = new Set<string>();
    let baseUrl: string | undefined;
    const lines = readline.createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (line.startsWith('listening ')) {
        baseUrl = line.slice('listening '.length).trim();
      } else if (line.startsWith('reached ')) {
        reached.add(line.slice('reached '.length).trim());
      } else if (line.startsWith('request ')) {
        requests.push(JSON.parse(line.slice('request '.length)) as ModelRequest);
      }
    });
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    const url = await waitFor('the fake model to listen', () => {
      if (exited) {
        throw new Error('the fake model exited before it listened');
      }
      return baseUrl;
    });
    const fake = new FakeModel(url, child, dir);
    (fake as { requests: ModelRequest[] }).requests = requests;
    fake.reached = reached;
    return fake;
  }

  waitForRequests(count: number, timeoutMs = 15_000): Promise<ModelRequest[]> {
    return waitFor(`${count} model request(s)`, () => (this.requests.length >= count ? this.requests : undefined), timeoutMs);
  }

  /** Resolves once a stream is held at the gate `name`. */
  waitReached(name: string, timeoutMs = 15_000): Promise<true> {
    return waitFor(`the model stream to reach ${name}`, () => this.reached.has(name) || undefined, timeoutMs);
  }

  /** Let the streams held at `name` go on. */
  release(name: string): void {
    this.child.stdin!.write(`release ${name}\n`);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
