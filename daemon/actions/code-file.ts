import { codeFile } from "../../protocol/actions/code.js";
import { readRunFile } from "../code/index.js";
import { entry } from "./context.js";

export default entry(codeFile, async (params, { services }) =>
  readRunFile(services.jobs.get(params.job), params.file, params.offset, params.limit),
);
