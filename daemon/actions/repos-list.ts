import { reposList } from "../../protocol/actions/repos-list.js";
import { entry } from "./context.js";

export default entry(reposList, async (_params, { services }) => ({ repos: await services.workspace.listRepos() }));
