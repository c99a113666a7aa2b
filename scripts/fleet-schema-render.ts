/** The text of docs/fleet.schema.json (shared by the writer and the staleness test). */
import { FleetSchema } from '../src/contract/fleet-schema.js';

export function renderFleetSchema(): string {
  return `${JSON.stringify(FleetSchema, null, 2)}\n`;
}
