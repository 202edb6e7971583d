import { stateGuide } from "../../protocol/actions/state-guide.js";
import { entry } from "./context.js";

export default entry(stateGuide, async (_params, { services }) => services.guide);
