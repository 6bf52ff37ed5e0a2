import { HarvestConfigSchema, type HarvestConfig } from '../../../src/sleep/config.ts';
import { resolveLocations } from '../../../src/sleep/harvest/locations.ts';
import type { Locations } from '../../../src/sleep/harvest/source.ts';

/** Where the agents of a Linux user whose home is `home` keep their sessions. */
export function locationsOf(home: string, harvest: Partial<HarvestConfig> = {}): Locations {
  return resolveLocations(HarvestConfigSchema.parse(harvest), { HOME: home }, 'linux', home);
}
