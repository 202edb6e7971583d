import { tokensList } from "../../protocol/actions/tokens-manage.js";
import { entry } from "./context.js";

export default entry(tokensList, async (_params, { services }) => ({ tokens: services.tokens.list() }));
