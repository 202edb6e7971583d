import { filesUnwatch } from "../../protocol/actions/files-fs.js";
import { entry } from "./context.js";

export default entry(filesUnwatch, async (params, { connection }) => {
  const watch = connection.files?.watches.get(params.watch);
  watch?.close();
  connection.files?.watches.delete(params.watch);
  return { watched: watch !== undefined };
});
