// PLACEHOLDER (being written)
import { z } from 'zod';
export const corsSchema = z.strictObject({ origins: z.array(z.string()) });
