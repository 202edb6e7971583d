import { tasksRemove } from "../../protocol/actions/tasks-remove.js";
import { entry } from "./context.js";

export default entry(tasksRemove, async (params, { services }) => services.workspace.removeTask(params));
