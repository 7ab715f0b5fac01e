import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

export interface OpenApiDocument {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>
  >;
  components: { schemas: Record<string, unknown> };
}

/**
 * Checks real responses against the OpenAPI document the service generates: the response
 * schema of the matching path, method and status (or its 4xx/5xx range).
 */
export function makeResponseValidator(document: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  // What the service sends was checked (as JMESPath, as a pattern) when it was written.
  ajv.addFormat("jmespath", true);
  ajv.addFormat("ecmascript-pattern", true);
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
  }));
  const compiled = new Map<string, ReturnType<Ajv2020["compile"]>>();

  function schemaFor(
    method: string,
    path: string,
    status: number,
  ): { key: string; schema: unknown } | "no content" | undefined {
    const template = templates.find((t) => t.pattern.test(path))?.template;
    const errorSchema = { $ref: "#/components/schemas/Error" };
    if (!template) return status >= 400 ? { key: `error`, schema: errorSchema } : undefined;
    const operation = document.paths[template]?.[method.toLowerCase()];
    if (!operation) return status >= 400 ? { key: `error`, schema: errorSchema } : undefined;
    const range = `${String(status)[0]}XX`;
    const response =
      operation.responses[String(status)] ?? operation.responses[range] ?? operation.responses[range.toLowerCase()];
    const schema = response?.content?.["application/json"]?.schema;
    // A documented answer without a body (204).
    if (response && !response.content && status === 204) return "no content";
    return schema ? { key: `${method} ${template} ${status}`, schema } : undefined;
  }

  return function validateResponse(method: string, path: string, status: number, body: unknown): string[] {
    const found = schemaFor(method, path, status);
    if (!found) return [`no response schema documented for ${method} ${path} ${status}`];
    if (found === "no content") return body === undefined ? [] : [`a 204 with a body`];
    let validate = compiled.get(found.key);
    if (!validate) {
      validate = ajv.compile({ components: document.components, ...(found.schema as object) });
      compiled.set(found.key, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath || "(root)"} ${e.message ?? ""}`);
  };
}
