import { portsList } from "../../protocol/actions/ports.js";
import { entry } from "./context.js";

export default entry(portsList, async (_params, { services }) => ({ ports: await services.ports.list() }));
