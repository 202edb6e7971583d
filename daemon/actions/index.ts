import type { ActionName } from "../../protocol/index.js";
import type { ActionEntry } from "./context.js";
import stateInfo from "./state-info.js";
import stateGuide from "./state-guide.js";
import stateCatalog from "./state-catalog.js";
import shell from "./shell.js";
import filesDownload from "./files-download.js";
import filesExtract from "./files-extract.js";
import filesRun from "./files-run.js";
import jobsList from "./jobs-list.js";
import jobsStatus from "./jobs-status.js";
import jobsOutput from "./jobs-output.js";
import jobsFollow from "./jobs-follow.js";
import jobsUnfollow from "./jobs-unfollow.js";
import jobsWait from "./jobs-wait.js";
import jobsInput from "./jobs-input.js";
import jobsResize from "./jobs-resize.js";
import jobsCancel from "./jobs-cancel.js";
import tokensCreate from "./tokens-create.js";
import tokensList from "./tokens-list.js";
import tokensRevoke from "./tokens-revoke.js";
import reposAdd from "./repos-add.js";
import reposList from "./repos-list.js";
import reposSnapshot from "./repos-snapshot.js";
import reposBundle from "./repos-bundle.js";
import tasksCreate from "./tasks-create.js";
import tasksList from "./tasks-list.js";
import tasksCommit from "./tasks-commit.js";
import tasksRun from "./tasks-run.js";
import tasksMerge from "./tasks-merge.js";
import tasksRemove from "./tasks-remove.js";
import secretsWrite from "./secrets-write.js";
import prepare from "./prepare.js";
import cacheList from "./cache-list.js";
import cachePrune from "./cache-prune.js";
import filesRead from "./files-read.js";
import filesWrite from "./files-write.js";
import filesEdit from "./files-edit.js";
import filesList from "./files-list.js";
import filesStat from "./files-stat.js";
import filesMkdir from "./files-mkdir.js";
import filesMove from "./files-move.js";
import filesRemove from "./files-remove.js";
import filesSearch from "./files-search.js";
import filesWatch from "./files-watch.js";
import filesUnwatch from "./files-unwatch.js";
import terminalOpen from "./terminal-open.js";
import consoleOpen from "./console-open.js";
import jobsWatch from "./jobs-watch.js";
import jobsUnwatch from "./jobs-unwatch.js";
import sshOpen from "./ssh-open.js";
import portsList from "./ports-list.js";
import portsWait from "./ports-wait.js";
import previewOpen from "./preview-open.js";
import desktopScreenshot from "./desktop-screenshot.js";
import desktopAct from "./desktop-act.js";
import browserOpen from "./browser-open.js";
import desktopOpen from "./desktop-open.js";
import stateMetrics from "./state-metrics.js";
import sessionOpen from "./session-open.js";
import sessionRun from "./session-run.js";
import sessionStatus from "./session-status.js";
import sessionList from "./session-list.js";
import sessionClose from "./session-close.js";
import codeContextCreate from "./code-context-create.js";
import codeRun from "./code-run.js";
import codeContextList from "./code-context-list.js";
import codeContextRestart from "./code-context-restart.js";
import codeContextRemove from "./code-context-remove.js";
import codeFile from "./code-file.js";

/**
 * Every handler, by the name of its action. The type makes an action without a handler (or a key
 * that names no action) a compile error; test/guide.test.ts checks each key names its handler's action.
 */
export const HANDLERS: Readonly<Record<ActionName, ActionEntry>> = {
  "state.info": stateInfo,
  "state.guide": stateGuide,
  "state.catalog": stateCatalog,
  shell: shell,
  "files.download": filesDownload,
  "files.extract": filesExtract,
  "files.run": filesRun,
  "jobs.list": jobsList,
  "jobs.status": jobsStatus,
  "jobs.output": jobsOutput,
  "jobs.follow": jobsFollow,
  "jobs.unfollow": jobsUnfollow,
  "jobs.wait": jobsWait,
  "jobs.input": jobsInput,
  "jobs.resize": jobsResize,
  "jobs.cancel": jobsCancel,
  "tokens.create": tokensCreate,
  "tokens.list": tokensList,
  "tokens.revoke": tokensRevoke,
  "repos.add": reposAdd,
  "repos.list": reposList,
  "repos.snapshot": reposSnapshot,
  "repos.bundle": reposBundle,
  "tasks.create": tasksCreate,
  "tasks.list": tasksList,
  "tasks.commit": tasksCommit,
  "tasks.run": tasksRun,
  "tasks.merge": tasksMerge,
  "tasks.remove": tasksRemove,
  "secrets.write": secretsWrite,
  prepare: prepare,
  "cache.list": cacheList,
  "cache.prune": cachePrune,
  "files.read": filesRead,
  "files.write": filesWrite,
  "files.edit": filesEdit,
  "files.list": filesList,
  "files.stat": filesStat,
  "files.mkdir": filesMkdir,
  "files.move": filesMove,
  "files.remove": filesRemove,
  "files.search": filesSearch,
  "files.watch": filesWatch,
  "files.unwatch": filesUnwatch,
  "terminal.open": terminalOpen,
  "console.open": consoleOpen,
  "jobs.watch": jobsWatch,
  "jobs.unwatch": jobsUnwatch,
  "ssh.open": sshOpen,
  "ports.list": portsList,
  "ports.wait": portsWait,
  "preview.open": previewOpen,
  "desktop.screenshot": desktopScreenshot,
  "desktop.act": desktopAct,
  "browser.open": browserOpen,
  "desktop.open": desktopOpen,
  "state.metrics": stateMetrics,
  "session.open": sessionOpen,
  "session.run": sessionRun,
  "session.status": sessionStatus,
  "session.list": sessionList,
  "session.close": sessionClose,
  "code.context.create": codeContextCreate,
  "code.run": codeRun,
  "code.context.list": codeContextList,
  "code.context.restart": codeContextRestart,
  "code.context.remove": codeContextRemove,
  "code.file": codeFile,
};
