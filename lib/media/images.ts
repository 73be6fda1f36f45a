import { fileTypeFromBuffer } from 'file-type';
import { imageSize } from 'image-size';
import { errors } from '../errors';

// spec 4.7: the bytes are checked to be a real image of an accepted format whatever the file
// name or the declared type say: the format is sniffed from the content (file-type reads the
// magic numbers) and the dimensions are read from the image header.

/**
 * What the network accepts in a post (docs/media.md): the formats of its image upload API, each
 * with the file name extensions that imply it; the first is the one an asset's key ends with.
 */
const IMAGE_FORMATS = {
  'image/jpeg': ['jpg', 'jpeg', 'jpe'],
  'image/png': ['png'],
  'image/gif': ['gif'],
  'image/webp': ['webp'],
} as const;
export type ImageType = keyof typeof IMAGE_FORMATS;
export const ACCEPTED_IMAGE_TYPES = Object.keys(IMAGE_FORMATS) as readonly ImageType[];

const TYPE_OF_EXTENSION = new Map<string, ImageType>(
  ACCEPTED_IMAGE_TYPES.flatMap((type) => IMAGE_FORMATS[type].map((extension) => [extension, type] as const)),
);

/** The extension an asset of this type is stored under. */
export function extensionOf(type: ImageType): string {
  return IMAGE_FORMATS[type][0];
}

export function isAcceptedImageType(type: string): type is ImageType {
  return (ACCEPTED_IMAGE_TYPES as readonly string[]).includes(type);
}

/** The content type a file name implies (spec 4.7: the inline path infers it from `fileName`), or null. */
export function imageTypeFromFileName(fileName: string): ImageType | null {
  const m = /\.([A-Za-z0-9]{1,10})$/.exec(fileName.trim());
  return m ? (TYPE_OF_EXTENSION.get(m[1]!.toLowerCase()) ?? null) : null;
}

/** Lower-cased media type without parameters ("image/PNG; q=1" → "image/png"). */
export function normalizeContentType(type: string): string {
  return type.split(';')[0]!.trim().toLowerCase();
}

export interface SniffedImage {
  mimeType: ImageType;
  width: number;
  height: number;
}

export async function sniffImage(bytes: Buffer): Promise<SniffedImage> {
  if (bytes.length === 0) throw errors.unprocessable('The image is empty.');
  const detected = await fileTypeFromBuffer(bytes);
  if (!detected || !isAcceptedImageType(detected.mime)) {
    throw errors.unprocessable(
      `The bytes are not an image of an accepted format (${ACCEPTED_IMAGE_TYPES.join(', ')})${detected ? `: they are ${detected.mime}` : ''}.`,
      { detectedType: detected?.mime ?? null, accepted: [...ACCEPTED_IMAGE_TYPES] },
    );
  }
  let size: { width?: number; height?: number };
  try {
    size = imageSize(bytes);
  } catch {
    throw errors.unprocessable(`The ${detected.mime} image is damaged: its dimensions cannot be read.`);
  }
  if (!size.width || !size.height) throw errors.unprocessable(`The ${detected.mime} image has no readable dimensions.`);
  return { mimeType: detected.mime, width: size.width, height: size.height };
}
