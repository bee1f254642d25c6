/** Real `/metrics` pages of client-go's work queue (see `test/fixtures/client-go/README.md`). */
import { fileURLToPath } from 'node:url';

export const CLIENT_GO_FIXTURES = fileURLToPath(new URL('../fixtures/client-go', import.meta.url));
