/**
 * The fields spec 2.2 marks "under implementation" — `data`, `example`, `variables` — derived from
 * a template's text and, when the fleet gives them, its `variables` names and `example` text. The
 * engine answers them per template type in GET /messenger/businesses/; the contract's
 * `describeTemplate` uses the same derivation for texts of the host's own.
 */
import type { TemplateVariable } from './fleet.js';
import { compileTemplate, renderTemplate } from './template-text.js';

/** The spec 2.2 fields of one template. */
export interface TemplateFields {
  /** The text with its `{{1}}`, `{{2}}`… placeholders. */
  readonly data: string;
  /** The text with sample values filled in. */
  readonly example: string;
  /** One entry per placeholder, in order of first appearance in the text. */
  readonly variables: readonly TemplateVariable[];
}

/** The spec 2.2 fields of a template type: `data` and `example` of one template, `variables` of each. */
export interface TemplateTypeFields {
  readonly data: string;
  readonly example: string;
  /** One list per template, in the order given. */
  readonly variables: readonly (readonly TemplateVariable[])[];
}

/** What {@link templateFields} derives the fields from. */
export interface TemplateFieldsSource {
  /** A text whose placeholders are `{{1}}`..`{{n}}` (checked by `scanPlaceholders`). */
  readonly text: string;
  /** Name of placeholder `{{k}}` at `names[k - 1]`. @default "{{k}}" */
  readonly names?: readonly (string | undefined)[];
  /** Sample value of placeholder `{{k}}` at `samples[k - 1]`, already checked usable. @default `[name]` */
  readonly samples?: readonly (string | undefined)[];
  /** A whole example text; when given it is the `example` and `samples` are not used. */
  readonly example?: string;
}

/**
 * Derives `data`, `example` and `variables` of one template: `"Hi {{1}}, {{2}} is due"` with names
 * `["customer"]` gives variables `[{ name: "customer", index: 0 }, { name: "{{2}}", index: 1 }]`
 * and example `"Hi [customer], [{{2}}] is due"`. The example never keeps a bare placeholder, so a
 * reader cannot mistake it for the text.
 */
export function templateFields(source: TemplateFieldsSource): TemplateFields {
  const nameOf = (k: number): string => source.names?.[k - 1] ?? `{{${k}}}`;
  const order: number[] = [];
  for (const part of compileTemplate(source.text)) {
    if (typeof part === 'string') continue;
    const k = part[0] + 1;
    if (!order.includes(k)) order.push(k);
  }
  const variables = Object.freeze(order.map((k) => Object.freeze({ name: nameOf(k), index: k - 1 })));
  let example = source.example;
  if (example === undefined) {
    // Placeholders are contiguous, so the largest seen is their count.
    const samples: string[] = [];
    for (let k = 1; k <= order.length; k++) samples.push(source.samples?.[k - 1] ?? `[${nameOf(k)}]`);
    example = renderTemplate(source.text, samples);
  }
  return Object.freeze({ data: source.text, example, variables });
}

/** A fleet template's fields: names from its `variables`, its `example` if it has one. */
export function fleetTemplateFields(template: { readonly text: string; readonly example?: string | undefined; readonly variables?: readonly TemplateVariable[] | undefined }): TemplateFields {
  const names: (string | undefined)[] = [];
  for (const v of template.variables ?? []) names[v.index] ??= v.name;
  return templateFields({ text: template.text, names, ...(template.example === undefined ? {} : { example: template.example }) });
}

/**
 * The fields of a template type made of `templates`: `data` and `example` of the first, one
 * `variables` list per template; `undefined` for no template (the type shows none of the three).
 */
export function templateTypeFields(templates: readonly TemplateFields[]): TemplateTypeFields | undefined {
  const first = templates[0];
  if (first === undefined) return undefined;
  return { data: first.data, example: first.example, variables: templates.map((t) => t.variables) };
}
