/**
 * GET /messenger/businesses/ response (spec 2.1, 2.2, 4.1). The engine returns `id`, `name` and
 * `template_types` with `id`, `name`, `output`; the three fields the spec marks "under
 * implementation" (`data`, `example`, `variables`) are optional here. Response objects allow extra
 * keys: the spec says the under-implementation keys carry an annotation text, and a client must
 * not break when the provider adds one.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_ID } from './limits.js';

const Id = Type.Integer({ minimum: 1, maximum: MAX_ID });

/** One placeholder of a template: its name and its zero-based index in `template_variables`. */
export const TemplateVariableSchema = Type.Object(
  {
    name: Type.String({ description: 'placeholder name, e.g. "{{1}}" or a name given in the fleet' }),
    index: Type.Integer({ minimum: 0, description: 'zero-based index into template_variables' }),
  },
  { title: 'TemplateVariable' },
);
export type TemplateVariable = Static<typeof TemplateVariableSchema>;

/** Element of `template_types` (spec 2.2). */
export const TemplateTypeSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    output: Type.Integer({ minimum: 0, description: 'messages that can be sent now for this type' }),
    data: Type.Optional(
      Type.String({ description: 'under implementation: template text with {{1}}, {{2}}, ... placeholders' }),
    ),
    example: Type.Optional(Type.String({ description: 'under implementation: template text with sample values' })),
    variables: Type.Optional(
      Type.Array(Type.Array(TemplateVariableSchema), {
        description: 'under implementation: one list per template of the type, one entry per placeholder',
      }),
    ),
  },
  { title: 'TemplateType' },
);
export type TemplateType = Static<typeof TemplateTypeSchema>;

/** Element of the GET /messenger/businesses/ response (spec 2.1). */
export const BusinessSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    template_types: Type.Array(TemplateTypeSchema),
  },
  { title: 'Business' },
);
export type Business = Static<typeof BusinessSchema>;

/** The whole GET /messenger/businesses/ response. */
export const BusinessesResponseSchema = Type.Array(BusinessSchema, { title: 'BusinessesResponse' });
export type BusinessesResponse = Static<typeof BusinessesResponseSchema>;
