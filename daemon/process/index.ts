/**
 * Process control, in one place: signalling a process or group, the SIGTERM → grace → SIGKILL
 * escalation, waiting until a group is gone, a process's identity (pid + start time from
 * /proc/<pid>/stat), and the job marker that finds a job's processes that left its group.
 */
export { pidAlive, signalGroup, signalTarget } from "./signal.js";
export { isProcessStartedAt, isSameProcess, parseProcStat, processStartTicks, procPids, readProcStat, type ProcStat } from "./identity.js";
export { DEFAULT_GRACE_MS, escalate, groupHasLiveMembers, terminateGroup, waitGroupGone, type Escalation } from "./terminate.js";
export { JOB_MARKER, jobProcesses, markedJob, onMainExit, reapMarked } from "./descendants.js";
export { CLOCK_TICKS, pageSize, parseUsage, readUsage, readUsageAt, type ProcUsage } from "./usage.js";
export { eachInFlight, PROC_READS_IN_FLIGHT, readableProcess, readProcFile, type ReadSlot, readSlot } from "./proc-read.js";
export { JOB_OOM_SCORE_RAISE, jobOomScoreAdj, oomKillBaseline, oomKillText, raiseOomScore } from "./oom.js";
