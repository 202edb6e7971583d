// The web terminal: one terminal job in xterm.js, full window, sized with the window; after a
// dropped socket it reconnects and resumes the output from the last byte shown.
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import type { LinkConnection } from "../client/link-connection.js";
import { decodeOutput, keepConnected, readLink, showLinkRefused } from "./link.js";

const status = document.getElementById("status")!;
const term = new Terminal({ scrollback: 10_000, cursorBlink: true, fontFamily: "monospace" });
const fit = new FitAddon();
term.loadAddon(fit);
term.open(document.getElementById("terminal")!);
fit.fit();

/** What tests and curious operators can read: the terminal and the live connection. */
const state: { term: Terminal; conn?: LinkConnection; next?: number; ended: boolean; connects: number } = {
  term,
  ended: false,
  connects: 0,
};
(window as unknown as { hotline: typeof state }).hotline = state;

function say(text: string): void {
  status.textContent = text;
  status.hidden = text === "";
}

/** One connection's work: follow the job (resuming after the last byte shown) at the terminal's size. */
async function attach(conn: LinkConnection, job: string): Promise<void> {
  state.conn = conn;
  state.connects++;
  say("");
  conn.onClose(() => (state.conn = undefined));
  conn.onEvent((event) => {
    if (event.event === "job.output") {
      const bytes = decodeOutput(event.data, event.encoding);
      term.write(bytes);
      state.next = event.offset + bytes.length;
    } else if (event.event === "job.exit") {
      state.ended = true;
      const how = event.status.exitCode !== undefined ? `exit code ${event.status.exitCode}` : event.status.state;
      term.write(`\r\n\x1b[2m[terminal ended: ${how}]\x1b[0m\r\n`);
    }
  });
  try {
    void conn.request("jobs.resize", { job, cols: term.cols, rows: term.rows }).catch(() => {});
    // The first attach replays the daemon's scrollback; a reconnect resumes after the last byte shown.
    await conn.request("jobs.follow", state.next === undefined ? { job } : { job, from: state.next });
  } catch (err) {
    say(`cannot follow ${job}: ${(err as Error).message}`);
    state.ended = true;
    conn.close();
  }
}

const link = readLink();
const job = link?.params.get("job");
if (!link || !job) showLinkRefused("terminal", "this address carries no terminal link");
else {
  document.title = `hotline terminal ${job}`;
  term.onData((data) => {
    state.conn
      ?.request("jobs.input", { job, data })
      .catch((err: Error & { code?: string }) => say(`input refused: ${err.code ?? ""} ${err.message}`));
  });
  term.onResize(({ cols, rows }) => {
    state.conn?.request("jobs.resize", { job, cols, rows }).catch(() => {});
  });
  window.addEventListener("resize", () => fit.fit());
  term.focus();
  void keepConnected(
    link,
    "terminal",
    say,
    (conn) => attach(conn, job),
    () => state.ended,
  );
}
