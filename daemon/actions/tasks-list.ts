import { tasksList } from "../../protocol/actions/tasks-list.js";
import { workspaceOf } from "../workspace-feature.js";
import { entry } from "./context.js";

export default entry(tasksList, async (params, { services }) => ({ tasks: await workspaceOf(services).listTasks(params) }));
