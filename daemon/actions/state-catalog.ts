import { stateCatalog } from "../../protocol/actions/state-catalog.js";
import { entry } from "./context.js";

export default entry(stateCatalog, async (_params, { services }) => services.prepare.catalog());
