import { EventEmitter } from "node:events";
import { ActionError } from "../../protocol/errors.js";
import type { Job } from "../jobs/job.js";
import type { JobOutcome } from "../jobs/manager.js";
import { JOB_MARKER } from "../process/index.js";
import type { Reservation } from "./budget.js";
import { type ChildExit, ReplChild } from "./child.js";
import { afterPendingOutput } from "./drain.js";
import { Generation } from "./host.js";
import { Requests } from "./requests.js";
import { StartWatch } from "./start-watch.js";
import type { ReplEnd, ReplOptions, ReplRequest, ReplState } from "./types.js";

/**
 * A long-lived child driven one request at a time over its own channel (fd 3 in, fd 4 out); each
 * request is a job whose log holds that request's output only. Cancel and timeout interrupt the
 * request (RequestStopper), then terminate it; a request that still does not end costs the child:
 * it is restarted as a new generation. Events: "state" (ReplState), "ended" (ReplEnd), "message"
 * (a message that came while no request ran).
 */
export class Repl<M> extends EventEmitter {
  state: ReplState = "starting";
  generation = 0;
  ended: ReplEnd | undefined;
  private gen: Generation | undefined;
  private readonly requests: Requests<M>;
  private reservation: Reservation | undefined;
  private ready: Promise<void> = Promise.resolve();
  private idleTimer: NodeJS.Timeout | undefined;
  private bytesRead = 0;

  constructor(private readonly options: ReplOptions<M>) {
    super();
    this.requests = new Requests<M>({
      name: options.name,
      jobs: options.jobs,
      log: options.log,
      stopper: options.driver.stopper,
      timing: options,
      state: () => this.state,
      setState: (state) => {
        if (state === "busy") clearTimeout(this.idleTimer);
        this.setState(state);
      },
      generation: () => ({ gen: this.gen, ready: this.ready, number: this.generation }),
      becomeIdle: () => this.becomeIdle(),
      restart: (reason) => this.restart(reason),
      bytesRead: () => this.bytesRead,
    });
  }

  /** The current generation's child (its pid, its signals), once spawned. */
  get child(): ReplChild | undefined {
    return this.gen?.child;
  }

  /** The current generation's host job. */
  get hostJob(): Job | undefined {
    return this.gen?.job;
  }

  /** The job of the running request (or the one queued to run next). */
  get runningJob(): string | undefined {
    return this.requests.runningJob;
  }

  /** Writes to the current generation's transcript (its host job's log). */
  transcript(stream: "stdout" | "stderr", data: Buffer | string): void {
    this.gen?.output(stream, data);
  }

  /** Adds fields to the current host job's status. */
  annotateHost(fields: Record<string, unknown>): void {
    this.gen?.annotate(fields);
  }

  /** Starts the first generation; resolves once it is ready. Refused past the budget; `unavailable` if it cannot start. */
  async start(): Promise<void> {
    this.reservation = this.options.budget.reserve();
    try {
      await (this.ready = this.startGeneration());
    } catch (err) {
      this.finish({ reason: (err as Error).message }, "closed");
      throw err;
    }
    if (this.closedWhileStarting()) return;
    this.becomeIdle();
  }

  /** Starts a request as a job (one at a time: `conflict` naming the running job, unless it is the same key). */
  request(request: ReplRequest<M>): Job {
    if (this.state === "exited" || this.state === "closed")
      throw new ActionError(
        "conflict",
        `${this.options.name} has ${this.state} (${this.ended?.reason ?? "no reason"}); it takes no more requests`,
      );
    return this.requests.admit(request);
  }

  /** Kills the current generation and starts the next (its state is lost); requests wait for it. */
  async restart(reason: string): Promise<void> {
    if (this.state === "closed") throw new ActionError("conflict", `${this.options.name} is closed`);
    if (this.state === "exited") {
      this.reservation = this.options.budget.reserve();
      this.ended = undefined;
    }
    this.setState("restarting");
    const old = this.gen;
    old?.end({ why: "restarted", message: `${reason}; generation ${this.generation + 1} replaced it` });
    if (old?.child && !old.child.hasExited) {
      old.child.signalGroup("SIGKILL");
      await Promise.race([old.child.exited, delay(2000)]);
    }
    if ((this.state as ReplState) === "closed") return;
    try {
      await (this.ready = this.startGeneration());
    } catch (err) {
      this.finish({ reason: (err as Error).message }, "exited");
      throw err;
    }
    if (this.closedWhileStarting()) return;
    this.becomeIdle();
  }

  /** A close that came while a generation started (its host job may have waited in the manager's queue) ends that generation too. */
  private closedWhileStarting(): boolean {
    if (this.state !== "closed") return false;
    const gen = this.gen;
    gen?.end({ why: "closed", message: this.ended?.reason ?? "closed" });
    if (gen?.child && !gen.child.hasExited) gen.child.terminate(1000);
    return true;
  }

  /** Ends the child (EOF on its inputs, SIGTERM, SIGKILL after `graceMs`) and frees its place in the budget. */
  async close(reason: string, graceMs = 1000): Promise<void> {
    if (this.state === "closed" || this.state === "exited") return;
    const gen = this.gen;
    this.finish({ reason }, "closed");
    gen?.end({ why: "closed", message: reason });
    const child = gen?.child;
    if (child && !child.hasExited) {
      child.terminate(graceMs);
      await Promise.race([child.exited, delay(graceMs + 1000)]);
    }
  }

  private startGeneration(): Promise<void> {
    const number = ++this.generation;
    const { driver, jobs, host, name } = this.options;
    const watch = new StartWatch(name, this.options.readyTimeoutMs);
    let generation!: Generation;
    const spawn = (scratch: string, hostJob: string): ReplChild => {
      const decoder = driver.decoder(
        (message) => this.onMessage(generation, watch, message),
        (error) => this.onProtocolError(generation, watch, error),
      );
      const spec = driver.spawn({ scratch, hostJob, generation: number });
      // The marker goes last, over any value given: it is how the child's strays are found (reapMarked).
      const child = new ReplChild(
        { ...spec, env: { ...spec.env, [JOB_MARKER]: hostJob } },
        {
          output: (stream, data) => this.onOutput(generation, watch, stream, data),
          messages: (chunk) => decoder.push(chunk),
        },
      );
      this.reservation?.setPid(child.pid);
      watch.begin(child);
      return child;
    };
    generation = new Generation(
      jobs,
      host,
      number,
      spawn,
      (signal) => void this.close(`its job ${generation.job.id} was stopped (${signal})`),
      (exit) => this.onExit(generation, watch, exit),
    );
    this.gen = generation;
    return watch.ready;
  }

  private onOutput(gen: Generation, watch: StartWatch, stream: "stdout" | "stderr", data: Buffer): void {
    this.bytesRead += data.length;
    if (!watch.isReady) return watch.noteOutput(data);
    const running = this.requests.current;
    if (gen === this.gen && running && running.generation === gen.number) {
      const bytes = running.request.filter ? running.request.filter(stream, data) : data;
      if (!bytes.length) return;
      running.job.output(stream, bytes);
      running.request.output?.(stream, bytes);
    } else gen.output(stream, data);
  }

  private onMessage(gen: Generation, watch: StartWatch, message: M): void {
    if (gen !== this.gen) return; // a killed generation's last words
    if (!watch.isReady) {
      if (this.options.driver.isReady(message)) watch.readied();
      else this.onProtocolError(gen, watch, new Error(`the first message was not the ready message: ${JSON.stringify(message)}`));
      return;
    }
    const running = this.requests.current;
    if (!running || running.done) return void this.emit("message", message);
    try {
      const outcome = running.request.message(message, running.job);
      if (outcome) running.end(outcome);
    } catch (err) {
      running.end({ ok: false, error: { code: "internal", message: `${this.options.name}: ${(err as Error).message}` } });
    }
  }

  private onProtocolError(gen: Generation, watch: StartWatch, error: Error): void {
    this.options.log.warn({ name: this.options.name, err: error }, "the child broke its protocol; killing it");
    watch.failed(error.message);
    gen.end({ why: "closed", message: `protocol error: ${error.message}` });
    if (gen === this.gen && this.state !== "closed") this.finish({ reason: `protocol error: ${error.message}` }, "exited");
    gen.child?.signalGroup("SIGKILL");
  }

  /** The child exited: its last output is read first, then the running request ends and the repl says why. */
  private async onExit(gen: Generation, watch: StartWatch, exit: ChildExit): Promise<void> {
    watch.exited(exit);
    await afterPendingOutput(() => this.bytesRead);
    if (gen !== this.gen) return;
    const running = this.requests.current;
    if (running && running.stopping !== "no" && this.state === "busy")
      return this.requests.restartStuck(running, "was killed with the child");
    const verdict = running && !running.done ? running.request.exited?.(exit, running.job) : undefined;
    if (running && verdict && "restart" in verdict && this.state === "busy") {
      this.setState("restarting");
      running.end(verdict.outcome);
      return this.requests.replace(verdict.restart);
    }
    if (this.state !== "closed" && this.state !== "exited" && this.state !== "restarting") {
      const why = exit.exitCode !== undefined ? `exit ${exit.exitCode}` : (exit.error ?? `killed by ${exit.signal}`);
      this.finish({ reason: `the child ended (${why})`, exitCode: exit.exitCode, signal: exit.signal }, "exited");
    }
    if (running) {
      const failed: JobOutcome = { ok: exit.exitCode === 0, exitCode: exit.exitCode, signal: exit.signal };
      running.end(verdict && "ok" in verdict ? verdict : failed);
    }
  }

  private finish(end: ReplEnd, state: "exited" | "closed"): void {
    this.ended ??= end;
    clearTimeout(this.idleTimer);
    this.reservation?.release();
    this.reservation = undefined;
    this.setState(state);
    this.emit("ended", this.ended);
  }

  private becomeIdle(): void {
    this.setState("idle");
    const idleMs = this.options.idleTimeoutMs ?? 0;
    if (idleMs <= 0) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.state === "idle") void this.close(`idle for ${idleMs} ms`);
    }, idleMs);
    this.idleTimer.unref();
  }

  private setState(state: ReplState): void {
    if (this.state === state) return;
    this.state = state;
    this.emit("state", state);
  }
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());
