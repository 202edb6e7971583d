import { codeContextCreate } from "../../protocol/actions/code.js";
import { statusOf } from "../code/index.js";
import { entry } from "./context.js";

export default entry(codeContextCreate, async (params, { services }) => ({ context: statusOf(await services.code.create(params)) }));
