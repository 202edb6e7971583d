import { jobsUnwatch } from "../../protocol/actions/jobs-watch.js";
import { entry } from "./context.js";

export default entry(jobsUnwatch, async (_params, { connection }) => {
  const watch = connection.watch;
  watch?.close();
  connection.watch = undefined;
  return { watching: watch !== undefined };
});
