import { DEFAULT_PORT_WAIT_MS, portsWait } from "../../protocol/actions/ports.js";
import { entry } from "./context.js";

export default entry(portsWait, async (params, { services }) => services.ports.wait(params.port, params.timeoutMs ?? DEFAULT_PORT_WAIT_MS));
