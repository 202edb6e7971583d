import { tasksCreate } from "../../protocol/actions/tasks-create.js";
import { workspaceOf } from "../workspace-feature.js";
import { entry } from "./context.js";

export default entry(tasksCreate, async (params, { services }) => workspaceOf(services).createTask(params));
