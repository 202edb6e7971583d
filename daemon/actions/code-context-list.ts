import { codeContextList } from "../../protocol/actions/code.js";
import { statusOf } from "../code/index.js";
import { entry } from "./context.js";

export default entry(codeContextList, async (_params, { services }) => ({
  contexts: services.code.list().map(statusOf),
  budget: services.code.usage(),
}));
