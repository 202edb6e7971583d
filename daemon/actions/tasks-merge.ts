import { tasksMerge } from "../../protocol/actions/tasks-merge.js";
import { entry } from "./context.js";

export default entry(tasksMerge, async (params, { services }) => services.workspace.merge(params));
