import { tasksRemove } from "../../protocol/actions/tasks-remove.js";
import { workspaceOf } from "../workspace-feature.js";
import { entry } from "./context.js";

export default entry(tasksRemove, async (params, { services }) => workspaceOf(services).removeTask(params));
