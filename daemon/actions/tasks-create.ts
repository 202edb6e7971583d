import { tasksCreate } from "../../protocol/actions/tasks-create.js";
import { entry } from "./context.js";

export default entry(tasksCreate, async (params, { services }) => services.workspace.createTask(params));
