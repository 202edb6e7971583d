import { tasksMerge } from "../../protocol/actions/tasks-merge.js";
import { workspaceOf } from "../workspace-feature.js";
import { entry } from "./context.js";

export default entry(tasksMerge, async (params, { services }) => workspaceOf(services).merge(params));
