import { secretsWrite } from "../../protocol/actions/secrets-write.js";
import { entry } from "./context.js";

// Inline, never a job: the values go from this request straight to the file (no job params, argv or env).
export default entry(secretsWrite, async (params, { services }) => services.workspace.writeSecrets(params));
