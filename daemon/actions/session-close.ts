import { sessionClose } from "../../protocol/actions/session.js";
import { statusOf } from "../sessions/index.js";
import { entry } from "./context.js";

export default entry(sessionClose, async (params, { services }) => ({
  session: statusOf(await services.sessions.close(params.session)),
}));
