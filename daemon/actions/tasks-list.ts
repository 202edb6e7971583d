import { tasksList } from "../../protocol/actions/tasks-list.js";
import { entry } from "./context.js";

export default entry(tasksList, async (params, { services }) => ({ tasks: await services.workspace.listTasks(params) }));
