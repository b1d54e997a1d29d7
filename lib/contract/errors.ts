/**
 * The Lance Namespace error codes every failure of the API carries (`code`), by name, with the HTTP status each one
 * answers with. The server raises them, the console reads them and the tests expect them by these names.
 */

export const ErrorCode = {
  Unsupported: 0,
  NamespaceNotFound: 1,
  NamespaceAlreadyExists: 2,
  NamespaceNotEmpty: 3,
  TableNotFound: 4,
  TableAlreadyExists: 5,
  TableIndexNotFound: 6,
  TableIndexAlreadyExists: 7,
  TableTagNotFound: 8,
  TableTagAlreadyExists: 9,
  TransactionNotFound: 10,
  TableVersionNotFound: 11,
  TableColumnNotFound: 12,
  InvalidInput: 13,
  ConcurrentModification: 14,
  PermissionDenied: 15,
  Unauthenticated: 16,
  ServiceUnavailable: 17,
  Internal: 18,
  InvalidTableState: 19,
  TableSchemaValidationError: 20,
  Throttling: 21,
  TableBranchNotFound: 22,
  TableBranchAlreadyExists: 23,
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;
export type ErrorCodeValue = (typeof ErrorCode)[ErrorCodeName];

export const STATUS_BY_CODE: Record<ErrorCodeValue, number> = {
  [ErrorCode.Unsupported]: 406,
  [ErrorCode.NamespaceNotFound]: 404,
  [ErrorCode.NamespaceAlreadyExists]: 409,
  [ErrorCode.NamespaceNotEmpty]: 409,
  [ErrorCode.TableNotFound]: 404,
  [ErrorCode.TableAlreadyExists]: 409,
  [ErrorCode.TableIndexNotFound]: 404,
  [ErrorCode.TableIndexAlreadyExists]: 409,
  [ErrorCode.TableTagNotFound]: 404,
  [ErrorCode.TableTagAlreadyExists]: 409,
  [ErrorCode.TransactionNotFound]: 404,
  [ErrorCode.TableVersionNotFound]: 404,
  [ErrorCode.TableColumnNotFound]: 404,
  [ErrorCode.InvalidInput]: 400,
  [ErrorCode.ConcurrentModification]: 409,
  [ErrorCode.PermissionDenied]: 403,
  [ErrorCode.Unauthenticated]: 401,
  [ErrorCode.ServiceUnavailable]: 503,
  [ErrorCode.Internal]: 500,
  [ErrorCode.InvalidTableState]: 409,
  [ErrorCode.TableSchemaValidationError]: 400,
  [ErrorCode.Throttling]: 429,
  [ErrorCode.TableBranchNotFound]: 404,
  [ErrorCode.TableBranchAlreadyExists]: 409,
};

const NAME_BY_CODE = new Map<number, ErrorCodeName>(Object.entries(ErrorCode).map(([name, code]) => [code, name as ErrorCodeName]));

/** The name of a code an answer carried, or undefined for one this contract does not know. */
export function errorCodeName(code: number | null | undefined): ErrorCodeName | undefined {
  return code === null || code === undefined ? undefined : NAME_BY_CODE.get(code);
}
