/**
 * GET /messenger/businesses/ response (spec 2.1, 2.2, 4.1). The engine returns `id`, `name` and
 * `template_types` with `id`, `name`, `output`, and the three fields the spec marks "under
 * implementation" under the key names `data`, `example` and `variables` (the spec does not show
 * the final names). Those three are optional here: a type without templates has none of them, and
 * a provider may not send them yet. Response objects allow extra keys: the spec says the
 * under-implementation keys carry an annotation text, and a client must not break when the
 * provider adds one.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_ID } from './limits.js';

const Id = Type.Integer({ minimum: 1, maximum: MAX_ID });

/** One placeholder of a template: its name and its zero-based index in `template_variables`. */
export const TemplateVariableSchema = Type.Object(
  {
    name: Type.String({ description: 'placeholder name: the name the fleet gives it, else "{{k}}"' }),
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
      Type.String({
        description:
          'under implementation (spec 2.2; key name chosen by sendpool): text of the first active template of the type, in the order the type lists them (the first template when none is active), with its {{1}}, {{2}}, ... placeholders; absent when the type has no template',
      }),
    ),
    example: Type.Optional(
      Type.String({
        description:
          "under implementation (spec 2.2; key name chosen by sendpool): the same template's text with sample values, the template's example when the fleet gives one, else each placeholder shown as [name]",
      }),
    ),
    variables: Type.Optional(
      Type.Array(Type.Array(TemplateVariableSchema), {
        description:
          'under implementation (spec 2.2; key name chosen by sendpool): one list per template described (the active templates of the type in order, or all when none is active), one entry per placeholder in order of first appearance in its text',
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
