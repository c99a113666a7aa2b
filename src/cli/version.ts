/** The package's version, for `sendpool --version` (bundled from package.json at build time). */
import { version } from '../../package.json';

export const VERSION: string = version;
