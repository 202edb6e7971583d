import { tasksCommit } from "../../protocol/actions/tasks-commit.js";
import { workspaceOf } from "../workspace-feature.js";
import { entry } from "./context.js";

export default entry(tasksCommit, async (params, { services }) => workspaceOf(services).commit(params));
