import { tasksCommit } from "../../protocol/actions/tasks-commit.js";
import { entry } from "./context.js";

export default entry(tasksCommit, async (params, { services }) => services.workspace.commit(params));
