// Object storage behind one small interface (ARCHITECTURE.md, "The outside world"), with one
// real implementation: S3 through the AWS SDK v3. The same code talks to AWS, to any
// S3-compatible store, and to the embedded Versity gateway that `npm start` and the tests run
// when S3_ENDPOINT is unset (tooling/objectStoreServer.ts), so the presigned-URL path tested is the one
// that ships.

import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { config } from '../config';

// The SDK warns once per process that releases from 2027 on will need Node 22; the service
// supports Node 20.19+ (package.json engines) and pins the SDK through the lockfile.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export interface StoredObject {
  bytes: number;
  contentType: string;
}

export interface PresignedPut {
  url: string;
  /** Headers the PUT must carry exactly as given: they are part of the signature. */
  headers: Record<string, string>;
  expiresAt: Date;
}

export interface ObjectStore {
  /**
   * spec 4.5: a SigV4 presigned PUT whose content type and length are signed headers, so the
   * store itself refuses a PUT carrying another content type (403 SignatureDoesNotMatch) or
   * another size.
   */
  presignPut(input: { key: string; contentType: string; bytes: number; expiresInSeconds: number }): Promise<PresignedPut>;
  /** null when there is no object under the key. */
  head(key: string): Promise<StoredObject | null>;
  get(key: string): Promise<Buffer | null>;
  /**
   * Stores the bytes. `sha256` is their hex SHA-256 when the caller has it already (content-keyed
   * objects): it is sent as the signed payload hash, so the bytes are not hashed a second time.
   */
  put(key: string, body: Buffer, contentType: string, sha256?: string): Promise<void>;
  delete(key: string): Promise<void>;
  /** Creates the bucket when it is missing (first start of an embedded or fresh store). */
  ensureBucket(): Promise<void>;
}

export interface S3StoreOptions {
  endpoint?: string;
  /** Origin of presigned URLs when clients reach the store by another address (the host is signed). */
  publicEndpoint?: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  /** Connections to the store per process. */
  maxSockets?: number;
}

function isMissing(err: unknown): boolean {
  if (!(err instanceof S3ServiceException)) return false;
  return err.$metadata?.httpStatusCode === 404 || err.name === 'NotFound' || err.name === 'NoSuchKey';
}

export class S3ObjectStore implements ObjectStore {
  readonly client: S3Client;
  private readonly presigner: S3Client;
  readonly bucket: string;

  constructor(opts: S3StoreOptions) {
    this.bucket = opts.bucket;
    this.client = S3ObjectStore.clientFor(opts, opts.endpoint);
    this.presigner = opts.publicEndpoint ? S3ObjectStore.clientFor(opts, opts.publicEndpoint) : this.client;
  }

  private static clientFor(opts: S3StoreOptions, endpoint: string | undefined): S3Client {
    return new S3Client({
      endpoint,
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
      // Checksums the SDK would add by default (CRC32 headers/trailers) are not understood by
      // every S3-compatible store and would be signed into presigned URLs the caller cannot
      // reproduce; content integrity is checked by SHA-256 after the upload instead.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // The SDK's default pool is 50 sockets; a burst of imports would queue behind it.
      requestHandler: {
        httpAgent: { keepAlive: true, maxSockets: opts.maxSockets },
        httpsAgent: { keepAlive: true, maxSockets: opts.maxSockets },
      },
    });
  }

  async presignPut(input: { key: string; contentType: string; bytes: number; expiresInSeconds: number }): Promise<PresignedPut> {
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: input.key,
      ContentType: input.contentType,
      ContentLength: input.bytes,
    });
    const url = await getSignedUrl(this.presigner, command, {
      expiresIn: input.expiresInSeconds,
      // Without these the presigner hoists nothing into the signature but the host: any content
      // type would be accepted. Signed, they are checked by the store on the PUT.
      signableHeaders: new Set(['content-type', 'content-length']),
    });
    return {
      url,
      headers: { 'Content-Type': input.contentType, 'Content-Length': String(input.bytes) },
      expiresAt: new Date(Date.now() + input.expiresInSeconds * 1000),
    };
  }

  async head(key: string): Promise<StoredObject | null> {
    try {
      const r = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { bytes: r.ContentLength ?? 0, contentType: r.ContentType ?? 'application/octet-stream' };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const bytes = await r.Body!.transformToByteArray();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async put(key: string, body: Buffer, contentType: string, sha256?: string): Promise<void> {
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: key,
      Body: body,
      ContentType: contentType,
      ContentLength: body.length,
    });
    if (sha256 !== undefined) {
      // SigV4 signs the payload's hash from this header when it is present (and hashes the body
      // itself otherwise); the store checks it against the bytes it receives.
      command.middlewareStack.add(
        (next) => (args) => {
          const { headers } = args.request as { headers?: Record<string, string> };
          if (headers) headers['x-amz-content-sha256'] = sha256;
          return next(args);
        },
        { step: 'build', name: 'knownPayloadHash' },
      );
    }
    await this.client.send(command);
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (err) {
      if (!isMissing(err) && !(err instanceof S3ServiceException && err.$metadata?.httpStatusCode === 404)) throw err;
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      // Another process created it in between.
      if (err instanceof S3ServiceException && (err.name === 'BucketAlreadyOwnedByYou' || err.name === 'BucketAlreadyExists')) return;
      throw err;
    }
  }
}

export function s3OptionsFromConfig(): S3StoreOptions {
  const s = config.s3;
  return {
    endpoint: s.endpoint,
    publicEndpoint: s.publicEndpoint,
    bucket: s.bucket,
    region: s.region,
    accessKeyId: s.accessKeyId,
    secretAccessKey: s.secretAccessKey,
    forcePathStyle: s.forcePathStyle,
    maxSockets: s.maxSockets,
  };
}

let store: S3ObjectStore | undefined;
let bucketReady: Promise<void> | undefined;

/** The process's store for config.s3; the bucket is created on first use when missing. */
export function objectStore(): ObjectStore {
  store ??= new S3ObjectStore(s3OptionsFromConfig());
  const s = store;
  const ready = () =>
    (bucketReady ??= s.ensureBucket().catch((err) => {
      bucketReady = undefined;
      throw err;
    }));
  return {
    presignPut: async (input) => {
      await ready();
      return s.presignPut(input);
    },
    head: async (key) => {
      await ready();
      return s.head(key);
    },
    get: async (key) => {
      await ready();
      return s.get(key);
    },
    put: async (key, body, type, sha256) => {
      await ready();
      return s.put(key, body, type, sha256);
    },
    delete: async (key) => {
      await ready();
      return s.delete(key);
    },
    ensureBucket: ready,
  };
}
