import { reposList } from "../../protocol/actions/repos-list.js";
import { workspaceOf } from "../workspace-feature.js";
import { entry } from "./context.js";

export default entry(reposList, async (_params, { services }) => ({ repos: await workspaceOf(services).listRepos() }));
