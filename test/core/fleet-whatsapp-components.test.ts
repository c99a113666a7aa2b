/**
 * A template's WhatsApp components in the fleet: read whole, normalised (the body's default), and
 * refused with every problem at once, each with its JSON path, the expected and the actual value.
 */
import { describe, expect, it } from 'vitest';
import { validateFleet } from '../../src/index.js';
import { specFleet } from './arbitraries.js';

type Json = Record<string, any>;

/** The spec fleet with a third template taking three values: name, amount and a payment code. */
function fleet(components: unknown, text = 'Hi {{1}}, {{2}} is due. Pay with {{3}}.'): Json {
  const f: Json = structuredClone(specFleet());
  f.templates.push({ id: 102, name: 'billing_rich', text, businessIds: [1], whatsapp: { language: 'pt_BR', components } });
  return f;
}

function problemsOf(f: unknown) {
  const result = validateFleet(f);
  if (result.ok) throw new Error('expected problems');
  return result.problems.map((p) => ({ path: p.path, expected: p.expected, actual: p.actual }));
}

function componentsOf(f: unknown) {
  const result = validateFleet(f);
  if (!result.ok) throw new Error(result.problems.map((p) => p.message).join('\n'));
  return result.fleet.templates.find((t) => t.id === 102)!.whatsapp!.components;
}

describe('WhatsApp template components in the fleet', () => {
  it('reads every kind of header, body parameter and button', () => {
    const headers = [
      { type: 'text', variable: 0 },
      { type: 'image', link: 'https://cdn.example.com/bill.png' },
      { type: 'video', id: '1166543234523' },
      { type: 'document', variable: 2, filename: 'Fatura.pdf' },
    ];
    for (const header of headers) expect(componentsOf(fleet({ header, body: [{ variable: 0 }, { variable: 1 }] }))!.header).toEqual(header);
    const buttons = [
      { type: 'url', index: 0, variable: 2 },
      { type: 'quick_reply', index: 1, payload: 'STOP' },
      { type: 'quick_reply', index: 2, variable: 0 },
      { type: 'copy_code', index: 3, couponCode: 'SAVE25' },
      { type: 'copy_code', index: 4, variable: 2 },
      { type: 'otp', index: 5, variable: 2 },
    ];
    expect(componentsOf(fleet({ buttons }))!.buttons).toEqual(buttons);
    const named = [
      { variable: 0, parameterName: 'first_name' },
      { variable: 1, parameterName: 'amount' },
    ];
    expect(componentsOf(fleet({ header: { type: 'text', variable: 0, parameterName: 'name' }, body: named }))).toEqual({
      header: { type: 'text', variable: 0, parameterName: 'name' },
      body: named,
      buttons: [],
    });
  });

  it('gives the body, when not described, the values no header or button takes, in order', () => {
    expect(componentsOf(fleet({ buttons: [{ type: 'url', index: 0, variable: 2 }] }))!.body).toEqual([{ variable: 0 }, { variable: 1 }]);
    expect(componentsOf(fleet({ header: { type: 'text', variable: 0 } }))!.body).toEqual([{ variable: 1 }, { variable: 2 }]);
    expect(componentsOf(fleet({}))!.body).toEqual([{ variable: 0 }, { variable: 1 }, { variable: 2 }]);
    // Said explicitly, a value may fill several parameters (an OTP fills the body and the button).
    expect(componentsOf(fleet({ body: [{ variable: 2 }], buttons: [{ type: 'otp', index: 0, variable: 2 }] }))!.body).toEqual([{ variable: 2 }]);
    // A template without components keeps the old behaviour: every value is a body parameter.
    expect(componentsOf(fleet(undefined))).toBeUndefined();
  });

  it('refuses, each with its JSON path, what cannot be sent', () => {
    const at = '$.templates[2].whatsapp.components';
    const cases: [string, unknown, string, string, RegExp][] = [
      ['a variable beyond the text', { body: [{ variable: 3 }] }, `${at}.body[0].variable`, '3 (number)', /from 0 to 2 \(the template's text takes 3 value\(s\)\)/],
      ['a negative variable', { header: { type: 'text', variable: -1 } }, `${at}.header.variable`, '-1 (number)', /zero-based index/],
      ['a URL button without a suffix source', { buttons: [{ type: 'url', index: 0 }] }, `${at}.buttons[0].variable`, 'missing', /appended to the button's URL/],
      ['an OTP button without its code', { buttons: [{ type: 'otp', index: 0 }] }, `${at}.buttons[0].variable`, 'missing', /one-time code/],
      ['a media header without link or id', { header: { type: 'image' } }, `${at}.header`, 'an object', /exactly one of "link", "id", "variable".*found none/],
      ['a media header with two sources', { header: { type: 'video', link: 'https://x.example/v.mp4', id: '12' } }, `${at}.header`, 'an object', /found link, id/],
      ['a media link that is no URL', { header: { type: 'image', link: 'cdn/bill.png' } }, `${at}.header.link`, '"cdn/bill.png" (string)', /http\(s\) URL/],
      ['a file name on an image', { header: { type: 'image', link: 'https://x.example/a.png', filename: 'a.png' } }, `${at}.header.filename`, '"a.png" (string)', /no such field/],
      ['an unknown header type', { header: { type: 'location' } }, `${at}.header.type`, '"location" (string)', /"text", "image", "video", "document"/],
      [
        'a button index repeated',
        {
          buttons: [
            { type: 'quick_reply', index: 1, payload: 'A' },
            { type: 'quick_reply', index: 1, payload: 'B' },
          ],
        },
        `${at}.buttons[1].index`,
        '1 (number)',
        /not used before.*first at .*buttons\[0\]\.index/,
      ],
      ['a button index past the last button', { buttons: [{ type: 'quick_reply', index: 10, payload: 'A' }] }, `${at}.buttons[0].index`, '10 (number)', /0 to 9/],
      ['a quick reply without payload', { buttons: [{ type: 'quick_reply', index: 0 }] }, `${at}.buttons[0]`, 'an object', /"payload", "variable"/],
      ['a coupon code with spaces', { buttons: [{ type: 'copy_code', index: 0, couponCode: 'SAVE 25' }] }, `${at}.buttons[0].couponCode`, '"SAVE 25" (string)', /letters or digits/],
      ['an unknown button type', { buttons: [{ type: 'phone_number', index: 0 }] }, `${at}.buttons[0].type`, '"phone_number" (string)', /"url", "quick_reply", "copy_code", "otp"/],
      [
        'a parameter name Meta does not take',
        { body: [{ variable: 0, parameterName: 'First Name' }] },
        `${at}.body[0].parameterName`,
        '"First Name" (string)',
        /lowercase letters, digits or underscores/,
      ],
      [
        'a parameter name twice',
        {
          body: [
            { variable: 0, parameterName: 'a' },
            { variable: 1, parameterName: 'a' },
          ],
        },
        `${at}.body[1].parameterName`,
        '"a" (string)',
        /not used before in the body/,
      ],
      ['named and positional parameters mixed', { body: [{ variable: 0, parameterName: 'a' }, { variable: 1 }] }, `${at}.body[1].parameterName`, 'missing', /all named or all positional/],
      ['an unknown key', { footer: 'x' }, `${at}.footer`, '"x" (string)', /no such field \(known: header, body, buttons\)/],
    ];
    for (const [what, components, path, actual, expected] of cases) {
      const problems = problemsOf(fleet(components));
      expect(problems, what).toHaveLength(1);
      expect(problems[0]!.path, what).toBe(path);
      expect(problems[0]!.actual, what).toBe(actual);
      expect(problems[0]!.expected, what).toMatch(expected);
    }
  });

  it('says a template without placeholders takes no variables', () => {
    const problems = problemsOf(fleet({ header: { type: 'image', variable: 0 } }, 'Your bill is due.'));
    expect(problems).toEqual([
      { path: '$.templates[2].whatsapp.components.header.variable', expected: "no variable: the template's text has no placeholders, so its contacts bring no values", actual: '0 (number)' },
    ]);
  });

  it('reports every problem of the components at once', () => {
    const problems = problemsOf(
      fleet({
        header: { type: 'document', filename: '' },
        body: [{ variable: 5, parameterName: 'name' }, { variable: 0 }],
        buttons: [{ type: 'url', index: 0 }, { type: 'copy_code', index: 0, variable: 9 }, 'reply'],
      }),
    );
    expect(problems.map((p) => p.path)).toEqual([
      '$.templates[2].whatsapp.components.header',
      '$.templates[2].whatsapp.components.header.filename',
      '$.templates[2].whatsapp.components.body[0].variable',
      '$.templates[2].whatsapp.components.body[1].parameterName',
      '$.templates[2].whatsapp.components.buttons[0].variable',
      '$.templates[2].whatsapp.components.buttons[1].variable',
      '$.templates[2].whatsapp.components.buttons[1].index',
      '$.templates[2].whatsapp.components.buttons[2]',
    ]);
  });
});
