/**
 * The part of OpenAPI 3.1 (https://spec.openapis.org/oas/v3.1.0) this project's document uses,
 * typed so that a misspelt key fails the build. Schemas are JSON Schema 2020-12, kept open.
 */
export type JsonSchema = { [key: string]: unknown };

export interface Reference {
  $ref: string;
}

export interface MediaType {
  schema?: JsonSchema | Reference;
  example?: unknown;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  description?: string;
  required?: boolean;
  schema: JsonSchema | Reference;
  style?: 'form' | 'simple';
  explode?: boolean;
}

export interface RequestBody {
  description?: string;
  required?: boolean;
  content: Record<string, MediaType>;
}

export interface Header {
  description?: string;
  schema: JsonSchema;
}

export interface Response {
  description: string;
  headers?: Record<string, Header>;
  content?: Record<string, MediaType>;
  /** The `ERR_*` codes this status carries (src/core/errors.ts); checked against the registry by test/http/openapi.test.ts. */
  'x-error-codes'?: readonly string[];
}

export interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  parameters?: Array<Parameter | Reference>;
  requestBody?: RequestBody;
  responses: Record<string, Response | Reference>;
  /** `[]`: no authentication. */
  security?: Array<Record<string, string[]>>;
}

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head';

export type PathItem = { parameters?: Array<Parameter | Reference> } & Partial<Record<Method, Operation>>;

export interface SecurityScheme {
  type: 'http' | 'apiKey';
  scheme?: string;
  name?: string;
  in?: 'header' | 'query' | 'cookie';
  description?: string;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string; license: { name: string; identifier: string } };
  servers?: Array<{ url: string; description?: string }>;
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, PathItem>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, Response>;
    parameters: Record<string, Parameter>;
    securitySchemes: Record<string, SecurityScheme>;
  };
}
